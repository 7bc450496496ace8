/**
 * A streaming ZIP writer (APPNOTE 6.3.10): members are stored, not deflated, each followed by
 * a data descriptor, so an archive is written front to back as its members' bytes arrive and
 * never seeks; Zip64 extra fields and end records are written when an archive or a member
 * passes the classic format's 4 GiB or 65,535-entry bounds. Names are UTF-8 (flag bit 11).
 * Pure: takes bytes, yields bytes; knows nothing of the catalog, the resource or HTTP.
 */
import { crc32 } from 'node:zlib';

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const END = 0x06054b50;
const ZIP64_EXTRA = 0x0001;
/** General purpose flags: bit 3, sizes and CRC in a data descriptor; bit 11, UTF-8 names. */
const FLAGS = 0x0808;
/** Version 4.5 of the format: Zip64. */
const ZIP64_VERSION = 45;
const BASIC_VERSION = 20;
/** "Made by" Unix (3), so readers take the mode from the external attributes. */
const MADE_BY = (3 << 8) | ZIP64_VERSION;
const MAX_32 = 0xffffffff;
const MAX_16 = 0xffff;

/** What the central directory needs to know of a member once its bytes are written. */
interface CentralRecord {
  name: Buffer;
  dosTime: number;
  dosDate: number;
  crc: number;
  size: number;
  offset: number;
  directory: boolean;
  /** The local header carried a Zip64 extra field (so the data descriptor has 8-byte sizes). */
  zip64Local: boolean;
}

/** The DOS date and time of `date` (its UTC fields; DOS times have no zone), 2-second steps, clamped to 1980–2107. */
function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = Math.min(Math.max(date.getUTCFullYear(), 1980), 2107);
  if (year !== date.getUTCFullYear()) return { dosTime: 0, dosDate: ((year - 1980) << 9) | (1 << 5) | 1 };
  return {
    dosTime: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2),
    dosDate: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

/**
 * Writes one archive. Call `directory` and `file` one at a time (each yields the bytes to
 * send, in order), then `finish` once; the concatenation of everything yielded is the archive.
 * Memory holds the central directory's records — about 50 bytes and the name per member —
 * never a member's bytes.
 */
export class ZipWriter {
  readonly #records: CentralRecord[] = [];
  #offset = 0;
  #finished = false;

  /** Bytes yielded so far. */
  get offset(): number {
    return this.#offset;
  }

  /** How many members were written. */
  get count(): number {
    return this.#records.length;
  }

  /** A directory member; `name` must end with '/'. */
  *directory(name: string, modified: Date): Generator<Buffer> {
    if (!name.endsWith('/')) throw new Error(`zip: a directory's name ends with '/': ${name}`);
    const record = this.#start(name, modified, true, 0);
    yield this.#count(this.#localHeader(record, 0));
    yield this.#count(this.#dataDescriptor(record));
  }

  /**
   * A stored file of exactly `size` bytes, read from `source`. Rejects (and the archive is
   * then unusable: stop sending it) with `source`'s error, or when `source` gives more or
   * fewer than `size` bytes. Resolves with the CRC-32 of what was written.
   */
  async *file(name: string, modified: Date, size: number, source: AsyncIterable<Buffer> | Iterable<Buffer>): AsyncGenerator<Buffer, number> {
    if (name.endsWith('/')) throw new Error(`zip: a file's name does not end with '/': ${name}`);
    const record = this.#start(name, modified, false, size);
    yield this.#count(this.#localHeader(record, size));
    let crc = 0;
    let written = 0;
    for await (const chunk of source) {
      written += chunk.length;
      if (written > size) throw new Error(`zip: '${name}' has more than the ${size} bytes announced`);
      crc = crc32(chunk, crc);
      yield this.#count(chunk);
    }
    if (written !== size) throw new Error(`zip: '${name}' ended after ${written} of its ${size} bytes`);
    record.crc = crc;
    yield this.#count(this.#dataDescriptor(record));
    return crc;
  }

  /** The central directory and the end records. */
  *finish(): Generator<Buffer> {
    if (this.#finished) throw new Error('zip: finished twice');
    this.#finished = true;
    const start = this.#offset;
    // NOTE: many small headers are joined into larger writes.
    let batch: Buffer[] = [];
    let batched = 0;
    for (const record of this.#records) {
      const header = this.#centralHeader(record);
      batch.push(header);
      batched += header.length;
      if (batched >= 64 * 1024) {
        yield this.#count(Buffer.concat(batch));
        batch = [];
        batched = 0;
      }
    }
    if (batch.length > 0) yield this.#count(Buffer.concat(batch));
    const size = this.#offset - start;
    const entries = this.#records.length;
    const zip64 = entries > MAX_16 - 1 || size >= MAX_32 || start >= MAX_32;
    if (zip64) {
      const endAt = this.#offset;
      const end = Buffer.alloc(56);
      end.writeUInt32LE(ZIP64_END, 0);
      end.writeBigUInt64LE(44n, 4);
      end.writeUInt16LE(MADE_BY, 12);
      end.writeUInt16LE(ZIP64_VERSION, 14);
      end.writeUInt32LE(0, 16);
      end.writeUInt32LE(0, 20);
      end.writeBigUInt64LE(BigInt(entries), 24);
      end.writeBigUInt64LE(BigInt(entries), 32);
      end.writeBigUInt64LE(BigInt(size), 40);
      end.writeBigUInt64LE(BigInt(start), 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(ZIP64_LOCATOR, 0);
      locator.writeUInt32LE(0, 4);
      locator.writeBigUInt64LE(BigInt(endAt), 8);
      locator.writeUInt32LE(1, 16);
      yield this.#count(Buffer.concat([end, locator]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END, 0);
    end.writeUInt16LE(zip64 ? MAX_16 : entries, 8);
    end.writeUInt16LE(zip64 ? MAX_16 : entries, 10);
    end.writeUInt32LE(zip64 ? MAX_32 : size, 12);
    end.writeUInt32LE(zip64 ? MAX_32 : start, 16);
    yield this.#count(end);
  }

  #start(name: string, modified: Date, directory: boolean, size: number): CentralRecord {
    if (this.#finished) throw new Error('zip: member after finish');
    const encoded = Buffer.from(name, 'utf8');
    if (encoded.length > MAX_16) throw new Error(`zip: name longer than ${MAX_16} bytes: ${name}`);
    const record: CentralRecord = {
      name: encoded, ...dosDateTime(modified), crc: 0, size, offset: this.#offset, directory,
      // NOTE: 8-byte sizes from the local header on once a member might not fit 32 bits; the
      // data descriptor then has them too (APPNOTE 4.3.9.1).
      zip64Local: size >= MAX_32,
    };
    this.#records.push(record);
    return record;
  }

  #count(chunk: Buffer): Buffer {
    this.#offset += chunk.length;
    return chunk;
  }

  #localHeader(record: CentralRecord, size: number): Buffer {
    const extra = record.zip64Local ? 20 : 0;
    const header = Buffer.alloc(30 + record.name.length + extra);
    header.writeUInt32LE(LOCAL_HEADER, 0);
    header.writeUInt16LE(record.zip64Local ? ZIP64_VERSION : BASIC_VERSION, 4);
    header.writeUInt16LE(FLAGS, 6);
    header.writeUInt16LE(0, 8);
    header.writeUInt16LE(record.dosTime, 10);
    header.writeUInt16LE(record.dosDate, 12);
    // NOTE: the CRC is known only after the bytes (it goes in the data descriptor); the sizes
    // are known before, and given here too, for readers that read the local headers alone.
    header.writeUInt32LE(0, 14);
    header.writeUInt32LE(record.zip64Local ? MAX_32 : size, 18);
    header.writeUInt32LE(record.zip64Local ? MAX_32 : size, 22);
    header.writeUInt16LE(record.name.length, 26);
    header.writeUInt16LE(extra, 28);
    record.name.copy(header, 30);
    if (record.zip64Local) {
      const at = 30 + record.name.length;
      header.writeUInt16LE(ZIP64_EXTRA, at);
      header.writeUInt16LE(16, at + 2);
      header.writeBigUInt64LE(BigInt(size), at + 4);
      header.writeBigUInt64LE(BigInt(size), at + 12);
    }
    return header;
  }

  #dataDescriptor(record: CentralRecord): Buffer {
    const long = record.zip64Local;
    const descriptor = Buffer.alloc(long ? 24 : 16);
    descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
    descriptor.writeUInt32LE(record.crc, 4);
    if (long) {
      descriptor.writeBigUInt64LE(BigInt(record.size), 8);
      descriptor.writeBigUInt64LE(BigInt(record.size), 16);
    } else {
      descriptor.writeUInt32LE(record.size, 8);
      descriptor.writeUInt32LE(record.size, 12);
    }
    return descriptor;
  }

  #centralHeader(record: CentralRecord): Buffer {
    const bigSize = record.size >= MAX_32;
    const bigOffset = record.offset >= MAX_32;
    // NOTE: the Zip64 extra holds exactly the fields whose header value is 0xFFFFFFFF, in order.
    const fields: number[] = [...(bigSize ? [record.size, record.size] : []), ...(bigOffset ? [record.offset] : [])];
    const extra = fields.length > 0 ? 4 + 8 * fields.length : 0;
    const header = Buffer.alloc(46 + record.name.length + extra);
    header.writeUInt32LE(CENTRAL_HEADER, 0);
    header.writeUInt16LE(MADE_BY, 4);
    header.writeUInt16LE(extra > 0 || record.zip64Local ? ZIP64_VERSION : BASIC_VERSION, 6);
    header.writeUInt16LE(FLAGS, 8);
    header.writeUInt16LE(0, 10);
    header.writeUInt16LE(record.dosTime, 12);
    header.writeUInt16LE(record.dosDate, 14);
    header.writeUInt32LE(record.crc, 16);
    header.writeUInt32LE(bigSize ? MAX_32 : record.size, 20);
    header.writeUInt32LE(bigSize ? MAX_32 : record.size, 24);
    header.writeUInt16LE(record.name.length, 28);
    header.writeUInt16LE(extra, 30);
    header.writeUInt16LE(0, 32);
    header.writeUInt16LE(0, 34);
    header.writeUInt16LE(0, 36);
    // NOTE: Unix mode in the high half; MS-DOS directory bit in the low one.
    header.writeUInt32LE(record.directory ? ((0o040755 << 16) | 0x10) >>> 0 : (0o100644 << 16) >>> 0, 38);
    header.writeUInt32LE(bigOffset ? MAX_32 : record.offset, 42);
    record.name.copy(header, 46);
    if (extra > 0) {
      let at = 46 + record.name.length;
      header.writeUInt16LE(ZIP64_EXTRA, at);
      header.writeUInt16LE(8 * fields.length, at + 2);
      at += 4;
      for (const value of fields) {
        header.writeBigUInt64LE(BigInt(value), at);
        at += 8;
      }
    }
    return header;
  }
}
