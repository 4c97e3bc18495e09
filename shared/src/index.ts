export * from './config';
export * from './http/errors';
export * from './http/route';
export * from './http/app';
export * from './http/ratelimit';
export * from './http/openapi';
export * from './logger';
export * from './http/serve';
