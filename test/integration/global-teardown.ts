export default async function globalTeardown(): Promise<void> {
  await globalThis.__DYNAMODB_LOCAL__?.stop();
}
