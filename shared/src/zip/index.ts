export * from './errors';
export * from './columns';
export * from './reader';
export * from './log';
export * from './package';
export * from './zipcrypto';
