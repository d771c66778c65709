import type { ClientExtension } from '@nteract-mcp/core';

/** The extension a client declares (`capabilities.extensions`) to get the outline as structured content. */
export const outlineExtension = 'example.com/outline';

/**
 * A client extension of our own, contributed to core's `ClientExtension` point: a client that
 * declares `example.com/outline` finds it announced, the tools that show cells marked in
 * `tools/list`, and their results' headings as `structuredContent`; any other client gets the
 * answers it got before.
 */
export class OutlineExtension implements ClientExtension {
  public readonly id = 'example.outline-extension';
  public readonly specificationVersion = 'v1';
  public readonly extension = outlineExtension;
  public readonly settings = {};
  public readonly resources = [];

  public toolMeta(): Readonly<Record<string, unknown>> {
    return { [outlineExtension]: 'headings' };
  }

  public async structuredContent(
    call: Parameters<ClientExtension['structuredContent']>[0],
  ): Promise<Record<string, unknown> | undefined> {
    const first = (call.result.content as { type: string; text?: string }[] | undefined)?.[0];
    if (first?.type !== 'text' || first.text === undefined) return undefined;
    try {
      const { headings } = JSON.parse(first.text) as { headings?: unknown };
      return Array.isArray(headings) ? { headings } : undefined;
    } catch {
      return undefined;
    }
  }
}
