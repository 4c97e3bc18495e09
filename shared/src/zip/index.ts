export * from './errors';
export * from './columns';
export * from './reader';
export * from './log';
export * from './log-read';
export { startLogReader, type LogReader } from './log-read-thread';
export * from './package';
export * from './zipcrypto';
