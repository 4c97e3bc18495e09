export * from './ids';
export * from './content';
