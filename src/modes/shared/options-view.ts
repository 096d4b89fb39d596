/** Helpers of the modes' options blocks (src/modes/<mode>/options.ts). */

/** The object without its undefined values (a block's view leaves absent fields out). */
export function definedOnly(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
