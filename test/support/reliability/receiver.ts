/**
 * Partner webhook endpoints that misbehave, each on its own path of one real HTTP server on 127.0.0.1: a path
 * answers as its behaviour says, every time (unlike `webhook-receiver.ts`, whose answers are one script shared by
 * every path), so endpoints of several partners can be served at once while their deliveries interleave.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  /** Answer this status, at once or after `delayMs` (a redirect with a `location` pointing back at this server). */
  | { status: number; location?: string; delayMs?: number }
  /** Never answer: the connection stays open until the sender gives up. */
  | { hang: true };

export interface ArrivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request's body had fully arrived (epoch ms). */
  at: number;
}

export class BehavingReceiver {
  readonly requests: ArrivedRequest[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    private readonly behaviours: Map<string, Behaviour>,
  ) {}

  /** `behaviours` by path; any other path answers 404 (and is recorded, so a followed redirect shows). */
  static async start(behaviours: Record<string, Behaviour>): Promise<BehavingReceiver> {
    const server = createServer();
    const receiver = new BehavingReceiver(server, new Map(Object.entries(behaviours)));
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '';
        receiver.requests.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const behaviour = receiver.behaviours.get(path) ?? { status: 404 };
        if ('hang' in behaviour) {
          receiver.hanging.add(response);
          response.on('close', () => receiver.hanging.delete(response));
          return;
        }
        const headers = behaviour.location === undefined ? {} : { location: receiver.url(behaviour.location) };
        const answer = () => {
          if (!response.destroyed) response.writeHead(behaviour.status, headers).end('{"ok":true}');
        };
        if (behaviour.delayMs === undefined) return answer();
        // Held like a hanging request meanwhile, so closing the receiver ends it
        receiver.hanging.add(response);
        response.on('close', () => receiver.hanging.delete(response));
        setTimeout(answer, behaviour.delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** From now on `path` answers as `behaviour` says (an endpoint that recovers, or dies). */
  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  /** The requests that arrived at `path` carrying partner event `eventId` (`webhook-id`), oldest first. */
  arrivals(path: string, eventId?: string): ArrivedRequest[] {
    return this.requests.filter((request) => request.path === path && (eventId === undefined || request.headers['webhook-id'] === eventId));
  }

  close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
