/** The `size` smallest items offered so far, in order: memory bounded by the page asked for, not by the count. */
export class FirstInOrder<T> {
  readonly items: T[] = [];
  constructor(
    private readonly size: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    const { items } = this;
    if (items.length >= this.size && this.compare(item, items[items.length - 1]!) >= 0) return;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(items[mid]!, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    items.splice(lo, 0, item);
    if (items.length > this.size) items.pop();
  }
}
