import type { WireRuntimeState } from '@nteract-mcp/runtimed-protocol';
import { el } from './element.js';
import { kernelWantsRestart } from './kernel-state-label.js';

/** What the kernel's controls ask of the page. */
export interface KernelBarActions {
  interrupt(): Promise<void>;
  restart(): Promise<void>;
  runAll(): Promise<void>;
  clearOutputs(): Promise<void>;
  save(): Promise<void>;
  undo(): Promise<void>;
}

/** How long a control that asks for a second click stays armed. */
const armedMs = 4000;

type Control = 'interrupt' | 'restart' | 'run-all' | 'clear-all' | 'save' | 'undo';

/**
 * The notebook's kernel and file controls, as a Jupyter front end has them: interrupt, restart,
 * run all, clear all outputs, save, and undo of the person's own last change. What cannot be undone (a restart loses the kernel's state,
 * clearing loses every output) asks for a second click, saying what it will do. A stopped kernel's
 * state says so and the restart control stands out: restarting is what there is to do.
 */
export class KernelBar {
  public readonly element = el('div', { className: 'kernel-bar', attrs: { role: 'toolbar', 'aria-label': 'Kernel' } });
  readonly #buttons = new Map<Control, HTMLButtonElement>();
  readonly #labels = new Map<Control, string>();
  #armed: Control | undefined;
  #armTimer: ReturnType<typeof setTimeout> | undefined;

  public constructor(actions: KernelBarActions) {
    this.element.append(
      this.button('interrupt', 'Interrupt', 'Interrupt the kernel', () => actions.interrupt()),
      this.button('restart', 'Restart', 'Restart the kernel: its variables are lost', () => actions.restart(), true),
      this.button('run-all', 'Run all', 'Run every code cell in order, stopping at the first error', () =>
        actions.runAll(),
      ),
      this.button('clear-all', 'Clear outputs', 'Clear every cell’s outputs', () => actions.clearOutputs(), true),
      this.button('save', 'Save', 'Save the notebook to its file', () => actions.save()),
      this.button('undo', 'Undo', 'Undo your last change to the notebook (z)', () => actions.undo()),
    );
  }

  /** The kernel's state: a stopped or unavailable kernel has its restart control stand out. */
  public runtime(runtime: WireRuntimeState): void {
    const stopped = kernelWantsRestart(runtime);
    this.control('restart').classList.toggle('wanted', stopped);
    this.control('restart').title = stopped
      ? 'The kernel stopped: restart it to run code again'
      : 'Restart the kernel: its variables are lost';
  }

  private control(name: Control): HTMLButtonElement {
    return this.#buttons.get(name) as HTMLButtonElement;
  }

  private button(
    name: Control,
    label: string,
    title: string,
    act: () => Promise<void>,
    confirm = false,
  ): HTMLButtonElement {
    const node = el('button', { type: 'button', className: `kernel-control ${name}`, title, textContent: label });
    node.dataset.action = name;
    node.addEventListener('click', () => {
      if (confirm && this.#armed !== name) {
        this.arm(name);
        return;
      }
      this.disarm();
      node.disabled = true;
      void act().finally(() => {
        node.disabled = false;
      });
    });
    this.#buttons.set(name, node);
    this.#labels.set(name, label);
    return node;
  }

  /** The first click of a control that asks: it says what a second click does, for a few seconds. */
  private arm(name: Control): void {
    this.disarm();
    const node = this.control(name);
    this.#armed = name;
    node.classList.add('armed');
    node.textContent = `${this.#labels.get(name)}? Click again`;
    this.#armTimer = setTimeout(() => this.disarm(), armedMs);
  }

  private disarm(): void {
    clearTimeout(this.#armTimer);
    const name = this.#armed;
    this.#armed = undefined;
    if (name === undefined) return;
    const node = this.control(name);
    node.classList.remove('armed');
    node.textContent = this.#labels.get(name) ?? '';
  }
}
