import { Transform, type TransformCallback } from 'node:stream';
import { ZipError } from './errors';

// Traditional PKWARE encryption ("ZipCrypto"), decryption only. Central's log import opened entries with
// one fixed password (contract A.3), so a device that encrypted its upload must still be readable. It is
// obfuscation, not security: nothing here is relied on to keep data secret.

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

const crcByte = (crc: number, b: number): number => (CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8)) >>> 0;

export class ZipCryptoKeys {
  private k0 = 0x12345678;
  private k1 = 0x23456789;
  private k2 = 0x34567890;

  constructor(password: Buffer) {
    for (const b of password) this.update(b);
  }

  update(b: number): void {
    this.k0 = crcByte(this.k0, b);
    this.k1 = (this.k1 + (this.k0 & 0xff)) >>> 0;
    this.k1 = (Math.imul(this.k1, 134775813) + 1) >>> 0;
    this.k2 = crcByte(this.k2, this.k1 >>> 24);
  }

  private streamByte(): number {
    const t = (this.k2 | 2) & 0xffff;
    return (Math.imul(t, t ^ 1) >>> 8) & 0xff;
  }

  decryptByte(c: number): number {
    const p = c ^ this.streamByte();
    this.update(p);
    return p;
  }

  encryptByte(p: number): number {
    const c = p ^ this.streamByte();
    this.update(p);
    return c;
  }
}

/**
 * Decrypts an entry's raw bytes. The 12-byte header's last byte must match the check byte (the CRC's
 * high byte, or the modification time's when sizes follow in a data descriptor), else the password is wrong.
 */
export class ZipCryptoDecrypt extends Transform {
  private readonly keys: ZipCryptoKeys;
  private header = Buffer.alloc(0);
  private checked = false;

  constructor(
    password: Buffer,
    private readonly checkByte: number,
    private readonly name: string,
  ) {
    super();
    this.keys = new ZipCryptoKeys(password);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let data = chunk;
    if (!this.checked) {
      const need = 12 - this.header.length;
      this.header = Buffer.concat([this.header, data.subarray(0, need)]);
      data = data.subarray(need);
      if (this.header.length < 12) return done();
      let last = 0;
      for (const b of this.header) last = this.keys.decryptByte(b);
      this.checked = true;
      if (last !== this.checkByte) return done(new ZipError('encrypted', `ZIP entry ${this.name}: wrong password`));
    }
    const out = Buffer.allocUnsafe(data.length);
    for (let i = 0; i < data.length; i += 1) out[i] = this.keys.decryptByte(data[i]);
    done(null, out);
  }

  override _flush(done: TransformCallback): void {
    done(this.checked ? null : new ZipError('corrupt', `ZIP entry ${this.name}: truncated encryption header`));
  }
}
