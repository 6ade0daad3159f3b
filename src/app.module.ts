import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { AuthModule } from './auth/auth.module.js';
import { CategoriesModule } from './categories/categories.module.js';
import { RouteMethods } from './errors/route-methods.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { RequestValidationPipe } from './http/request-validation.pipe.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { HttpModule } from './http/http.module.js';
import { InventoryModule } from './inventory/inventory.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { RouteTable } from './http/route-table.js';
import { PetsModule } from './pets/pets.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      // AuthModule before RateLimitModule: global guards run in this order, and the rate limit
      // counts per API key, so it needs the key the auth guard verified.
      imports: [
        ConfigModule.forRoot(config),
        ScheduleModule.forRoot(),
        DatabaseModule,
        HttpModule,
        AuthModule,
        RateLimitModule.forRoot(config),
        PetsModule,
        CategoriesModule,
        InventoryModule,
        OrdersModule,
        EventsModule,
        WebhooksModule,
        HealthModule,
        MetricsModule.forRoot(config),
      ],
      providers: [
        RouteTable,
        { provide: RouteMethods, useExisting: RouteTable },
        { provide: APP_PIPE, useClass: RequestValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
