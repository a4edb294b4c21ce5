/**
 * A stand-in for `console/dist` for the infra tests: the console stack only packs the folder, so a page and one
 * hashed asset are enough, and the tests never wait for (or race) a Vite build of the real console.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new folder shaped like Vite's output: `index.html` and `assets/index-<hash>.js`. */
export function consoleDistFixture(): string {
  const dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><div id="root"></div><script type="module" src="/admin/assets/index-fixture.js"></script>\n');
  writeFileSync(join(dist, 'assets', 'index-fixture.js'), 'export {};\n');
  return dist;
}
