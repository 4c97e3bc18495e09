import { createFolderStore, type FolderStoreConfig } from './folder';
import { createS3Store, type S3StoreConfig } from './s3';
import type { ObjectStore } from './types';

export * from './types';
export { createFolderStore, createS3Store, type FolderStoreConfig, type S3StoreConfig };

export type ObjectStoreConfig = ({ kind: 'folder' } & FolderStoreConfig) | ({ kind: 's3' } & S3StoreConfig);

/** Picks the driver `config.objectStore` names: S3 when S3_ENDPOINT is set, else the folder OBJECT_DIR. */
export function createObjectStore(config: Readonly<ObjectStoreConfig>): ObjectStore {
  return config.kind === 's3' ? createS3Store(config) : createFolderStore(config);
}
