/** Moving and copying across collections (see `move-copy-suite.ts`) on the embedded SQLite catalog and files. */
import { moveCopySuite } from './move-copy-suite.ts';

moveCopySuite('SQLite and files', {});
