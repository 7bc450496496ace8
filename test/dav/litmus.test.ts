/** The litmus WebDAV suite (see `litmus-suite.ts`) on the embedded defaults: SQLite and files. */
import { litmusSuite } from './litmus-suite.ts';

litmusSuite('SQLite and files', {});
