interface ViolationGroup {
  count: number;
  readonly examples: { readonly detail: string; readonly lines: readonly string[] }[];
}

/**
 * Broken promises found by a fuzz run, grouped by kind, with the first few examples of each (the
 * detail and the input lines involved), so one run reports every kind of defect it met.
 */
export class FuzzViolations {
  readonly #groups = new Map<string, ViolationGroup>();

  public constructor(private readonly examplesPerKind = 3) {}

  public add(kind: string, detail: string, lines: readonly string[]): void {
    let group = this.#groups.get(kind);
    if (!group) {
      group = { count: 0, examples: [] };
      this.#groups.set(kind, group);
    }
    group.count += 1;
    if (group.examples.length < this.examplesPerKind) group.examples.push({ detail, lines: lines.slice(0, 10) });
  }

  public get total(): number {
    let total = 0;
    for (const group of this.#groups.values()) total += group.count;
    return total;
  }

  /** Kind → count, for assertions and summaries. */
  public kinds(): Record<string, number> {
    return Object.fromEntries([...this.#groups].map(([kind, group]) => [kind, group.count]));
  }

  /** Every kind with its count and examples, one block per kind. */
  public report(): string {
    if (this.#groups.size === 0) return 'no violations';
    return [...this.#groups]
      .map(([kind, group]) =>
        [
          `${kind}: ${group.count}`,
          ...group.examples.flatMap((example) => [
            `  - ${example.detail.slice(0, 3000)}`,
            ...example.lines.map((line) => `      sent: ${line.slice(0, 400)}`),
          ]),
        ].join('\n'),
      )
      .join('\n');
  }
}
