import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, type ObjectSource } from '@lms/db';
import { isObjectNotFound, type ObjectStore, type ObjectStoreConfig } from './objects';

/** The central object store (folder or S3) as the object source of a backup. */
export function storeObjects(store: ObjectStore, config: Readonly<ObjectStoreConfig>): ObjectSource {
  return {
    describe: config.kind === 's3'
      ? `S3 bucket ${config.bucket} at ${config.endpoint}`
      : `folder ${path.resolve(repoRoot, config.dir)}`,
    async list() {
      // The listing's ETag (S3) or MD5 (folder store) is what `--link-from` compares, without a download.
      return (await store.list()).map((o) => ({ key: o.key, size: o.size, etag: o.etag || undefined }));
    },
    async read(key) {
      try {
        return await store.get(key);
      } catch (err) {
        if (isObjectNotFound(err)) throw Object.assign(new Error(`Object not found: ${key}`), { code: 'NotFound' });
        throw err;
      }
    },
    async info(key) {
      const st = await store.stat(key);
      return { contentType: st.contentType, metadata: st.metadata };
    },
    async write(key, file, info) {
      await store.put(key, fs.createReadStream(file), { contentType: info.contentType, metadata: info.metadata });
    },
    async remove(key) {
      await store.delete(key);
    },
  };
}
