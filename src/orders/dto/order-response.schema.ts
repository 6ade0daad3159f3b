import { RouteSchema } from '@nestjs/platform-fastify';
import { ORDER_PROPERTIES } from './order-properties.js';

const properties = Object.entries(ORDER_PROPERTIES);

/** OrderDto as JSON Schema for Fastify's compiled serializer: types and presence only. */
const ORDER_JSON_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(properties.map(([name, { type }]) => [name, { type }])),
  required: properties.filter(([, { required }]) => required).map(([name]) => name),
};

/** Serializes the route's answer with `status` as one Order. */
export const RespondsWithOrder = (status: 200 | 201) =>
  RouteSchema({ response: { [status]: ORDER_JSON_SCHEMA } });

/** Serializes the route's 200 as an array of Orders. */
export const RespondsWithOrders = () =>
  RouteSchema({ response: { 200: { type: 'array', items: ORDER_JSON_SCHEMA } } });
