import type { ControlPlane } from '../../dev/control-plane.js';

export default async function globalTeardown(): Promise<void> {
  const cp = (globalThis as { __LATCHKEY_CP__?: ControlPlane }).__LATCHKEY_CP__;
  await cp?.stop();
}
