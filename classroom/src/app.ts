import express, { type Express } from 'express';
import { buildOpenApi, createBaseApp, createLimiter, mount } from '@lms/shared';
import type { Config } from './config';
import { classroomGates, identify } from './auth/guards';
import { classroomRoutes } from './areas';
import { VERSION } from './areas/app/routes';
import type { Deps } from './http/types';

export const SIGN_IN_PATHS = ['/auth/login'];

export function createApp(config: Config, deps: Deps): Express {
  const router = express.Router({ caseSensitive: false, strict: false });
  mount(router, classroomRoutes, classroomGates);

  const general = createLimiter({ name: 'classroom', windowMs: 60_000, limit: config.rateLimit.perMinute, redis: deps.redis, logger: deps.logger });
  const signIn = createLimiter({
    name: 'classroom-signin', windowMs: 15 * 60_000, limit: config.rateLimit.loginPer15Minutes, redis: deps.redis, logger: deps.logger, failuresOnly: true,
  });
  const signInRouter = express.Router({ caseSensitive: false, strict: false });
  signInRouter.post(SIGN_IN_PATHS, signIn);

  const app = createBaseApp({
    config: { nodeEnv: config.nodeEnv, trustProxy: config.trustProxy, corsOrigins: config.corsOrigins, jsonLimit: '50mb' },
    logger: deps.logger,
    preRoutes: [general, signInRouter, identify()],
    router,
    openapi: () => buildOpenApi({ title: 'Classroom server API', version: VERSION }, classroomRoutes),
  });
  app.locals.config = config;
  app.locals.deps = deps;
  return app;
}
