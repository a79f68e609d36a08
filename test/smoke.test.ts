import t from 'tap';
import { VERSION } from '../src/version.js';
t.equal(VERSION, '0.1.0');
