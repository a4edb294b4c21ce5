/**
 * The API reference's viewer (`@scalar/api-reference`): its version, which names the script's URL
 * (`/docs/scalar.js?v=<version>`) so a browser may cache the script for good. Both documentation functions read it:
 * the page links the versioned URL, the script's function answers it as immutable.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Where the bundle for AWS puts the viewer's package.json (beside `index.mjs`: `infra/build/bundling.ts`, FUNCTION_FILES). */
export const SCALAR_PACKAGE_FILE = 'scalar-package.json';

let version: string | undefined;

/** The viewer package's version: beside the bundle (AWS), else from the package (its exports do not name package.json). */
export function scalarVersion(): string {
  if (version !== undefined) return version;
  let text: string;
  try {
    text = readFileSync(new URL(`./${SCALAR_PACKAGE_FILE}`, import.meta.url), 'utf8');
  } catch {
    const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
    text = readFileSync(`${entry.slice(0, entry.lastIndexOf('/dist/'))}/package.json`, 'utf8');
  }
  version = (JSON.parse(text) as { version: string }).version;
  return version;
}
