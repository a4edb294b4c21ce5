/**
 * Seeds of the tests that draw at random. Fixed by default: every run draws the same cases, so a red run is red
 * again when replayed and a green one is not green by the luck of the draw. An environment variable names
 * another seed, to explore further or to replay one that failed. Every seed is read here (`seedFrom`), which
 * prints it; fast-check also prints the seed (and path) of a failing property itself.
 */
import fc from 'fast-check';

/** The seeds already printed by this test file (jest gives each file its own module registry). */
const printed = new Set<string>();

/**
 * The seed a test draws its random cases from: the integer in `process.env[name]`, else `fallback`; anything else
 * there is an error, not silently replaced. Printed once per name and test file, with where it came from, so the
 * log of any run, red or green, says how to draw the same cases again.
 */
export function seedFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  const fromEnvironment = raw !== undefined && raw.trim() !== '';
  const seed = fromEnvironment ? Number(raw) : fallback;
  if (!Number.isSafeInteger(seed)) throw new Error(`${name} must be an integer seed, not ${JSON.stringify(raw)}`);
  if (!printed.has(name)) {
    printed.add(name);
    console.log(`${name}=${seed} (${fromEnvironment ? 'from the environment' : 'the fixed default'}; ${name}=<seed> draws other cases)`);
  }
  return seed;
}

/** The default seed of the fast-check properties (PROPERTY_SEED replays another). */
export const DEFAULT_PROPERTY_SEED = 27_112_026;

/**
 * Gives every fast-check property of the calling test file the same fixed seed, `PROPERTY_SEED` when set (each
 * test file has its own module registry, so its own fast-check settings). A property that passes its own `seed`
 * keeps it. Returns the seed.
 */
export function fixPropertySeed(): number {
  const seed = seedFrom('PROPERTY_SEED', DEFAULT_PROPERTY_SEED);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
  return seed;
}
