import type { Express } from 'express';
import { createServiceApp } from '@lms/shared';
import type { Config } from './config';
import { classroomGates, identify } from './auth/guards';
import { serviceRoutes } from './areas';
import { VERSION } from './areas/app/routes';
import type { Deps } from './http/types';

export const SIGN_IN_PATHS = ['/auth/login'];

export function createApp(config: Config, deps: Deps): Express {
  return createServiceApp({
    name: 'classroom',
    title: 'Classroom server API',
    version: VERSION,
    http: { nodeEnv: config.nodeEnv, trustProxy: config.trustProxy, corsOrigins: config.corsOrigins, countRequest: config.logRequests ? undefined : deps.countRequest },
    bodyLimit: config.maxJsonBytes,
    rateLimit: config.rateLimit,
    signIn: { paths: SIGN_IN_PATHS, methods: ['post'] },
    routes: serviceRoutes,
    gates: classroomGates,
    identify: identify(),
    logger: deps.logger,
    redis: deps.redis,
    locals: { config, deps },
  });
}
