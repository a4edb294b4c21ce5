/** The parts of a local composition that started, stopped in reverse order of starting. */
export interface Stops {
  /** Registers the stop of a part that has just started. */
  push(stop: () => Promise<void>): void;
  /** Stops every part, last started first; a part that fails to stop is reported and the rest still stop. */
  stop(): Promise<void>;
}

export function stopsInReverse(): Stops {
  const stops: Array<() => Promise<void>> = [];
  return {
    push: (stop) => void stops.push(stop),
    stop: async () => {
      for (const stopPart of stops.reverse()) await stopPart().catch((error: unknown) => console.error(error));
      stops.length = 0;
    },
  };
}
