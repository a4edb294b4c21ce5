/** Loads the Lambda functions of `functions/` into this process, as the local runtime's stand-ins for AWS invoke them. */

/** Imports `functions/<name>.ts` once and returns its `handler`, like a warm Lambda container. */
export function loadFunction<Handler>(name: string): Promise<Handler> {
  let handler = handlers.get(name);
  if (handler === undefined) {
    handler = import(`../../functions/${name}.ts`).then((module: { handler: unknown }) => module.handler);
    handlers.set(name, handler);
  }
  return handler as Promise<Handler>;
}

const handlers = new Map<string, Promise<unknown>>();
