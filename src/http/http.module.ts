import { Global, Module } from '@nestjs/common';
import { RequestsInFlight } from './requests-in-flight.js';

/** What the HTTP server knows that features read: the requests waiting on this process. */
@Global()
@Module({ providers: [RequestsInFlight], exports: [RequestsInFlight] })
export class HttpModule {}
