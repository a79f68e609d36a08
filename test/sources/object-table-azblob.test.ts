/** The shared object-store table (object-table.ts) against the azblob backend (test/support/object-backends.ts). */
import t from 'tap';
import { OBJECT_BACKENDS } from '../support/object-backends.js';
import { runObjectTable } from './object-table.js';

await runObjectTable(t, OBJECT_BACKENDS.azblob);
