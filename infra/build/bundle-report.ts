/**
 * `npm run bundle-report [-- --max-kb 500 --top 15 --detail NAME --out DIR]`: bundles every `functions/*.ts` exactly as the
 * stacks do (`bundling.ts`), prints each bundle's size (the minified `.mjs`, and its separate source map) largest
 * first, then what fills the largest bundle (esbuild's metafile), then the AWS SDK packages the bundles leave to the
 * Lambda runtime, and exits 1 if a bundle is over `--max-kb` or imports an `@aws-sdk/*` package the runtime does
 * not ship (`RUNTIME_SDK_PACKAGE`: what the code imports, and what its dependencies do).
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Metafile } from 'esbuild';
import { buildFunction, FUNCTIONS_DIR, RUNTIME_SDK_PACKAGE } from './bundling';

const { values: args } = parseArgs({
  options: {
    'max-kb': { type: 'string', default: '500' },
    top: { type: 'string', default: '15' },
    /** Break down this function's bundle instead of the largest. */
    detail: { type: 'string' },
    /** Keep the bundles in this directory (default: a temporary one, removed afterwards). */
    out: { type: 'string' },
  },
});
const maxKb = Number(args['max-kb']);
const top = Number(args.top);
if (!(maxKb > 0) || !(top >= 0)) throw new Error('--max-kb must be a positive number and --top a count');

const outRoot = args.out ?? mkdtempSync(join(tmpdir(), 'bundle-report-'));
const kb = (bytes: number) => bytes / 1024;
const fixed = (n: number) => n.toFixed(1);

interface Bundle { name: string; codeBytes: number; mapBytes: number; metafile: Metafile; outfile: string }

async function bundle(name: string): Promise<Bundle> {
  const outDir = join(outRoot, name);
  const { outfile, result } = await buildFunction(name, outDir);
  // For https://esbuild.github.io/analyze/ or a closer look at who imports what.
  if (args.out) writeFileSync(join(outDir, 'meta.json'), JSON.stringify(result.metafile));
  return { name, codeBytes: statSync(outfile).size, mapBytes: statSync(`${outfile}.map`).size, metafile: result.metafile!, outfile };
}

/** `node_modules/@scope/pkg/...` → `@scope/pkg`, `node_modules/pkg/...` → `pkg`, else the project's own code. */
function packageOf(path: string): string {
  const at = path.lastIndexOf('node_modules/');
  if (at < 0) return path.startsWith('lib/') || path.startsWith('functions/') ? `(project) ${path.split('/')[0]}/` : path;
  const parts = path.slice(at + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

function largestInputs(b: Bundle): { files: [string, number][]; packages: [string, number][] } {
  const output = Object.entries(b.metafile.outputs).find(([path]) => path.endsWith('.mjs'))![1];
  const files = Object.entries(output.inputs).map(([path, { bytesInOutput }]) => [path, bytesInOutput] as [string, number]);
  const packages = new Map<string, number>();
  for (const [path, bytes] of files) packages.set(packageOf(path), (packages.get(packageOf(path)) ?? 0) + bytes);
  const bySize = (a: [string, number], z: [string, number]) => z[1] - a[1];
  return { files: files.sort(bySize).slice(0, top), packages: [...packages].sort(bySize).slice(0, top) };
}

/** The `@aws-sdk/*` packages each bundle imports (external: the Lambda runtime's) → the functions importing them. */
function runtimeSdkImports(bundles: Bundle[]): Map<string, string[]> {
  const imports = new Map<string, string[]>();
  for (const b of bundles) {
    const packages = new Set(
      Object.values(b.metafile.outputs)
        .flatMap((output) => output.imports)
        .filter(({ external, path }) => external === true && path.startsWith('@aws-sdk/'))
        .map(({ path }) => path.split('/').slice(0, 2).join('/')),
    );
    for (const name of packages) imports.set(name, [...(imports.get(name) ?? []), b.name]);
  }
  return imports;
}

try {
  const names = readdirSync(FUNCTIONS_DIR).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -'.ts'.length));
  const bundles = (await Promise.all(names.map(bundle))).sort((a, z) => z.codeBytes - a.codeBytes);

  const width = Math.max(...names.map((n) => n.length));
  console.log(`${'function'.padEnd(width)}  ${'code KB'.padStart(9)}  ${'map KB'.padStart(9)}`);
  for (const b of bundles) {
    const over = kb(b.codeBytes) > maxKb ? `  over ${maxKb} KB` : '';
    console.log(`${b.name.padEnd(width)}  ${fixed(kb(b.codeBytes)).padStart(9)}  ${fixed(kb(b.mapBytes)).padStart(9)}${over}`);
  }

  const biggest = bundles[0]!;
  const detailed = args.detail === undefined ? biggest : bundles.find((b) => b.name === args.detail);
  if (detailed === undefined) throw new Error(`--detail: no function ${args.detail}`);
  if (top > 0) {
    const { files, packages } = largestInputs(detailed);
    console.log(`\n${detailed.name}: largest packages (KB in the minified output)`);
    for (const [name, bytes] of packages) console.log(`  ${fixed(kb(bytes)).padStart(7)}  ${name}`);
    console.log(`\n${detailed.name}: largest modules`);
    for (const [path, bytes] of files) console.log(`  ${fixed(kb(bytes)).padStart(7)}  ${path}`);
  }

  const sdk = [...runtimeSdkImports(bundles)].sort(([a], [z]) => a.localeCompare(z));
  const unprovided = sdk.filter(([name]) => !RUNTIME_SDK_PACKAGE.test(name));
  console.log('\nleft to the Lambda runtime (external), by how many functions import it');
  for (const [name, functions] of sdk) {
    const refused = RUNTIME_SDK_PACKAGE.test(name) ? '' : `  not shipped by the runtime (RUNTIME_SDK_PACKAGE): ${functions.join(', ')}`;
    console.log(`  ${String(functions.length).padStart(7)}  ${name}${refused}`);
  }

  const over = bundles.filter((b) => kb(b.codeBytes) > maxKb);
  console.log(`\n${bundles.length} functions; largest ${fixed(kb(biggest.codeBytes))} KB; limit ${maxKb} KB: ${over.length === 0 ? 'all within' : `${over.length} over`}`);
  if (unprovided.length > 0) console.log(`${unprovided.length} AWS SDK package(s) the Lambda runtime does not ship: ${unprovided.map(([name]) => name).join(', ')}`);
  if (args.out) console.log(`bundles and metafiles (meta.json) kept in ${outRoot}`);
  process.exitCode = over.length === 0 && unprovided.length === 0 ? 0 : 1;
} finally {
  if (!args.out) rmSync(outRoot, { recursive: true, force: true });
}
