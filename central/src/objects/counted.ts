import { ObjectStoreError, type ObjectStore } from './types';

/** Errors of the caller's making, not of the store: a missing object, an invalid key or metadata. */
const CALLERS = new Set(['NotFound', 'InvalidKey', 'InvalidMetadata']);

/**
 * The same store, telling `onError` of every operation the store itself failed (unreachable, refused,
 * out of space), for the object-store error metric.
 */
export function countingErrors(store: ObjectStore, onError: (operation: string) => void): ObjectStore {
  const counted = <A extends unknown[], R>(operation: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        if (!(err instanceof ObjectStoreError && CALLERS.has(err.code))) onError(operation);
        throw err;
      }
    };
  const presignPut = store.presignPut;
  return {
    kind: store.kind,
    put: counted('put', store.put.bind(store)),
    get: counted('get', store.get.bind(store)),
    stat: counted('stat', store.stat.bind(store)),
    delete: counted('delete', store.delete.bind(store)),
    list: counted('list', store.list.bind(store)),
    probe: counted('probe', store.probe.bind(store)),
    ...(presignPut ? { presignPut: counted('presign', presignPut.bind(store)) } : {}),
  };
}
