/**
 * The example partner backend (`examples/partner-backend/src/main.ts`) as a process of its own, run the way a
 * partner runs it: configured by its environment variables (examples/partner-backend/README.md), listening on a
 * port of its choosing. The runtime talks to it over HTTP only, so the service never loads the example's code.
 *
 * That path is still a dependency on examples/, at run time, which the `nothing-imports-examples` rule of
 * `.dependency-cruiser.cjs` cannot see (it follows imports, and this is a path string). It is the intended shape:
 * the partner's code runs as a partner runs it, in its own process, started from its own entry point, and nothing
 * of it enters the service's module graph. Moving or renaming that file breaks `npm start`'s `/sandbox`, which
 * test/integration/sandboxes/checkout.test.ts would show.
 *
 * Like a partner's process, it is given its own configuration and the little a Node process needs
 * ({@link INHERITED}), never the runtime's environment: that holds the admin JWT secret, the processor's keys and
 * AWS credentials, none of them the partner's.
 *
 * It is forked with an IPC channel: the backend says where it listens over it, and exits when it closes, so it
 * never outlives the runtime, even one killed with SIGKILL. It runs in a process group of its own, as DynamoDB
 * Local does: Ctrl-C in the terminal reaches the runtime alone, which drains the sandbox's requests first and
 * then stops the backend with SIGTERM (it answers what it holds and finishes its reconciliations).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: this module's directory is `infra/local/sandbox/checkout`. */
const ROOT = join(import.meta.url === undefined ? __dirname : dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const ENTRY = join(ROOT, 'examples', 'partner-backend', 'src', 'main.ts');

/**
 * What the backend's process inherits from the runtime's environment: where programs and the home and temporary
 * directories are, the locale and time zone, the terminal's colours for its log, and Node's own settings
 * (`NODE_OPTIONS`, `NODE_EXTRA_CA_CERTS`...), but not a `NODE_` variable that holds a credential (`NODE_AUTH_TOKEN`,
 * npm's). On Windows, the variables a process there cannot start without. Everything the example reads (its README's
 * table) is set from {@link BackendSettings} instead.
 */
const INHERITED = {
  names: new Set(['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'TZ', 'TERM', 'NO_COLOR', 'FORCE_COLOR', 'SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT', 'USERPROFILE']),
  prefixes: ['NODE_', 'LC_'],
  credential: /TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH/,
};

/** The variables of `env` the backend inherits ({@link INHERITED}); Windows's names are matched in any case, as it matches them. */
function inheritedEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => {
      const upper = name.toUpperCase();
      if (process.platform !== 'win32' && upper !== name) return false;
      return (INHERITED.names.has(upper) || INHERITED.prefixes.some((prefix) => upper.startsWith(prefix))) && !INHERITED.credential.test(upper);
    }),
  );
}

/** Loading TypeScript through tsx takes a second or two; a busy machine, longer. */
const START_TIMEOUT_MS = 30_000;

export interface BackendSettings {
  serviceUrl: string;
  apiKey: string;
  hmacSecret: string;
  partnerId: string;
  webhookSecret: string;
  basePath: string;
  products: readonly unknown[];
  processorJsUrl: string;
}

export interface BackendProcess {
  /** Where it listens (`http://127.0.0.1:<port>`), its routes under the base path. */
  origin: string;
  /** Resolves when the process has exited, however. */
  exited: Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
  stop(graceMs: number): Promise<void>;
}

/**
 * Forks the backend and resolves once it listens. `onSpawn` is told the process at once, before it listens, so
 * a runtime stopping meanwhile can stop it too.
 */
export async function startBackendProcess(settings: BackendSettings, onSpawn: (child: { stop: BackendProcess['stop']; exited: Promise<void> }) => void): Promise<BackendProcess> {
  const child = fork(ENTRY, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: {
      ...inheritedEnvironment(process.env),
      SERVICE_URL: settings.serviceUrl,
      API_KEY: settings.apiKey,
      HMAC_SECRET: settings.hmacSecret,
      PARTNER_ID: settings.partnerId,
      WEBHOOK_SECRET: settings.webhookSecret,
      PORT: '0',
      BASE_PATH: settings.basePath,
      PRODUCTS: JSON.stringify(settings.products),
      PROCESSOR_JS_URL: settings.processorJsUrl,
    },
    // Its banner (where it listens, what to pay) is for a partner at a terminal; its warnings and errors are the runtime's too.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    detached: true,
  });
  // The runtime's life is its servers': the backend (and its channel) must not keep it running.
  child.unref();
  child.channel?.unref();
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    // A process that could not be started sends no 'exit'; any other error (a signal it could not be sent) is moot.
    child.on('error', () => {
      if (child.pid === undefined) resolve();
    });
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const stop = async (graceMs: number) => {
    if (hasExited) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(killer);
  };
  onSpawn({ stop, exited });
  const url = await listening(child, exited);
  return { origin: new URL(url).origin, exited, stop };
}

async function listening(child: ChildProcess, exited: Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  let onMessage: ((message: unknown) => void) | undefined;
  try {
    return await Promise.race([
      new Promise<string>((resolve) => {
        onMessage = (message) => {
          const { event, url } = (message ?? {}) as { event?: unknown; url?: unknown };
          if (event === 'listening' && typeof url === 'string') resolve(url);
        };
        child.on('message', onMessage);
      }),
      exited.then(() => {
        throw new Error(`the example partner backend exited (${child.signalCode ?? `code ${child.exitCode}`}) before listening; its error is in the log above`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the example partner backend did not listen within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
    if (onMessage !== undefined) child.off('message', onMessage);
  }
}
