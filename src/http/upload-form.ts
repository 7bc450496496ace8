/**
 * Reads a multipart/form-data upload: exactly one file part, in the field `file`, streamed to
 * the caller as it arrives (never buffered); other fields in any order, of which `force` counts.
 * It stores nothing itself and knows nothing of paths.
 */
import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { LadingError } from '../core/errors.ts';
import { flagValue } from './schemas.ts';

/** The one file of a form, as the form's reader hands it over. */
export interface FormFile {
  /** The file name the form gives (`filename` of its Content-Disposition). */
  filename: string;
  /** The file's bytes; ends only once the whole form is read, so fields after it still count. */
  source: Readable;
  /** Whether the form or the query says `force`; settles before `source` ends. */
  force: Promise<boolean>;
}

const BOUNDARY = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^\s;"]+))/i;

export class UploadForm {
  /** `force` as far as the form has been read (the query's value to start with); final once `read` settles. */
  force: boolean;
  readonly #request: FastifyRequest;
  readonly #maxFileBytes: number;

  constructor(request: FastifyRequest, options: { force: boolean; maxFileBytes: number }) {
    this.#request = request;
    this.force = options.force;
    this.#maxFileBytes = options.maxFileBytes;
  }

  /**
   * Reads the form and calls `upload` with its file as soon as the file part starts; resolves
   * with what `upload` resolves. A `force` field (`true`, `True`, `1`, `yes`, … in any case, as
   * the query's flag) before or after the file counts, so `upload` must await `file.force`
   * before committing. Rejects with `BAD_REQUEST` for a Content-Type without boundary, a form
   * without a file, a second file, a file in another field, or a `force` that is not a flag —
   * in which case `file.source` fails with that error, so nothing is stored — and as `upload`
   * rejects.
   */
  async read<T>(upload: (file: FormFile) => Promise<T>): Promise<T> {
    const type = this.#request.headers['content-type'] ?? '';
    const boundary = BOUNDARY.exec(type);
    if (!boundary || !(boundary[1] ?? boundary[2])) {
      throw new LadingError('BAD_REQUEST', 'A multipart/form-data body needs a boundary parameter in its Content-Type.');
    }
    // NOTE: two files are let through the parser so that a second one is seen and refused
    // rather than silently dropped.
    const parts = this.#request.parts({ limits: { fileSize: this.#maxFileBytes + 1, files: 2, fields: 20, parts: 40 } });
    const iterator = parts[Symbol.asyncIterator]();
    const source = new PassThrough();
    // NOTE: the upload listens for the source's errors once it reads it; one failed before
    // that must not be an uncaught error (the upload sees it as destroyed).
    source.on('error', () => {});
    let decide!: (force: boolean) => void;
    const force = new Promise<boolean>((resolve) => { decide = resolve; });
    let uploading: Promise<T> | null = null;
    let fileRead: Promise<void> = Promise.resolve();
    // NOTE: an upload that fails before reading the file (no permission, the object exists)
    // stops consuming it, and the parser would wait forever for it to be read: each wait for
    // the next part races the upload's failure. The promise is this form's own: one shared
    // by all forms that never settles would keep every race's reaction, and with it every
    // request, alive forever.
    let fail!: (err: unknown) => void;
    const failed = new Promise<never>((_resolve, reject) => { fail = reject; });
    failed.catch(() => {});
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), failed]);
        if (next.done) break;
        const part = next.value;
        if (part.type === 'field') {
          if (part.fieldname === 'force') this.force = this.#flag(part.value) || this.force;
          continue;
        }
        if (part.fieldname !== 'file' || uploading) {
          part.file.resume();
          throw new LadingError('BAD_REQUEST', part.fieldname === 'file'
            ? 'The form has more than one file; send exactly one file, in the field \'file\'.'
            : `The form has a file in the field '${part.fieldname}'; send exactly one file, in the field 'file'.`);
        }
        part.file.on('error', (err) => source.destroy(err));
        part.file.pipe(source, { end: false });
        fileRead = finished(part.file);
        fileRead.catch(() => {});
        uploading = upload({ filename: part.filename, source, force });
        uploading.catch(fail);
      }
      if (!uploading) throw new LadingError('BAD_REQUEST', 'The form has no file; send it in the form field \'file\'.');
      decide(this.force);
      // NOTE: the parser may have read the whole form before the pipe has moved the file's
      // bytes (it flows on a later tick); ending the source first would cut them off.
      await Promise.race([fileRead, failed]);
      source.end();
      return await uploading;
    } catch (err) {
      decide(this.force);
      source.destroy(err as Error);
      // The upload fails with `err` and removes what it wrote; answer only after that.
      await uploading?.catch(() => {});
      throw err;
    }
  }

  #flag(value: unknown): boolean {
    const flag = typeof value === 'string' ? flagValue(value) : null;
    if (flag === null) throw new LadingError('BAD_REQUEST', 'The form field \'force\' must be a flag: true or false (also True/False, 1/0, yes/no).');
    return flag;
  }
}
