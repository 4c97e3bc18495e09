import zlib from 'node:zlib';
import { ZipCryptoKeys } from '../src';

/** A hand-made ZIP (the writers refuse unsafe names, an attacker's tool does not). */
export function rawZip(
  entries: Array<{ name: string; data: Buffer; deflate?: boolean; declaredSize?: number; password?: string }>,
): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const crc = zlib.crc32(e.data);
    let body = e.deflate ? zlib.deflateRawSync(e.data) : e.data;
    if (e.password !== undefined) {
      const keys = new ZipCryptoKeys(Buffer.from(e.password));
      const plain = Buffer.concat([Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, crc >>> 24]), body]);
      body = Buffer.from(plain.map((b) => keys.encryptByte(b)));
    }
    const flags = 0x0800 | (e.password !== undefined ? 1 : 0);
    const size = e.declaredSize ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(e.deflate ? 8 : 0, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
