import express, { type Express } from 'express';
import { buildOpenApi, createBaseApp, createLimiter, mount } from '@lms/shared';
import type { Config } from './config';
import { centralGates, identify } from './auth/guards';
import { centralRoutes } from './areas';
import type { Deps } from './http/types';
import { VERSION } from './version';

/** Sign-in routes get their own, stricter limiter that counts failed attempts. */
export const SIGN_IN_PATHS = ['/auth/login', '/auth/school/login', '/auth/forgotpassword', '/auth/sendverificationemail'];

export function createApp(config: Config, deps: Deps): Express {
  const router = express.Router({ caseSensitive: false, strict: false });
  mount(router, centralRoutes, centralGates);

  const general = createLimiter({ name: 'central', windowMs: 60_000, limit: config.rateLimit.perMinute, redis: deps.redis, logger: deps.logger });
  const signIn = createLimiter({
    name: 'central-signin', windowMs: 15 * 60_000, limit: config.rateLimit.loginPer15Minutes, redis: deps.redis, logger: deps.logger, failuresOnly: true,
  });
  const signInRouter = express.Router({ caseSensitive: false, strict: false });
  signInRouter.post(SIGN_IN_PATHS, signIn);
  signInRouter.put(SIGN_IN_PATHS, signIn);

  const app = createBaseApp({
    config: { nodeEnv: config.nodeEnv, trustProxy: config.trustProxy, corsOrigins: config.corsOrigins, jsonLimit: '50mb' },
    logger: deps.logger,
    preRoutes: [general, signInRouter, identify()],
    router,
    openapi: () => buildOpenApi({ title: 'Central API', version: VERSION }, centralRoutes),
  });
  app.locals.config = config;
  app.locals.deps = deps;
  return app;
}
