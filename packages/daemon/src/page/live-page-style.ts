/** The page's stylesheet, served as `/assets/live-page.css` (the CSP allows no inline style). */
export const livePageStyle = `
:root { color-scheme: light; font-family: system-ui, sans-serif; }
body { margin: 0 auto; max-width: 980px; padding: 16px 24px 48px; background: #fafafa; color: #222; }
header { position: sticky; top: 0; background: #fafafa; padding-bottom: 8px; border-bottom: 1px solid #ddd; }
h1 { font-size: 20px; margin: 8px 0 4px; word-break: break-all; }
#status, #peers { margin: 2px 0; font-size: 13px; color: #555; }
.cell { display: grid; grid-template-columns: 56px 1fr; gap: 4px 8px; margin: 14px 0; padding: 8px;
  background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; }
.cell:focus-within { border-color: #4a7bd0; box-shadow: 0 0 0 2px #4a7bd033; }
.prompt { grid-column: 1; color: #3b5fa0; font: 13px ui-monospace, monospace; padding-top: 6px; text-align: right; }
.source { grid-column: 2; width: 100%; box-sizing: border-box; resize: vertical; border: 1px solid #eee; border-radius: 4px;
  padding: 6px 8px; font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; }
.markdown .source { background: #fff; font-family: system-ui, sans-serif; }
.tools, .outputs { grid-column: 2; }
.tools button { font-size: 12px; margin-right: 4px; }
.outputs pre { margin: 4px 0; font: 13px/1.4 ui-monospace, monospace; white-space: pre-wrap; }
.outputs .error { background: #fdecec; color: #8a1f1f; padding: 6px; border-radius: 4px; }
.outputs .stderr { background: #fff6e0; }
.outputs img { max-width: 100%; }
.outputs iframe.rich { width: 100%; min-height: 120px; border: 1px solid #eee; background: #fff; }
main > button { margin-top: 12px; }
ul { padding-left: 18px; } li { margin: 6px 0; }
`;
