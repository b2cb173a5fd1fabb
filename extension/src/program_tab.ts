/**
 * The *Paddle program* tab: a PaddlePaddle program file (.pdmodel, Fluid's __model__)
 * opened from the file browser, drawn with paddle_nb's ProgramView, its inputs, outputs and
 * parameters listed, and a button that writes and opens a notebook that runs and steps it.
 * The Jupyter server reads the file and holds the view (paddle_nb/lab/); no kernel starts.
 */
import { ToolbarButton, showErrorMessage } from '@jupyterlab/apputils';
import {
  ABCWidgetFactory, DocumentRegistry, DocumentWidget
} from '@jupyterlab/docregistry';
import { Widget } from '@lumino/widgets';

import { RemoteModel, loadStyles, loadView, requestAPI } from './view_host';

export const FILE_TYPE = 'paddle-program';
export const FACTORY = 'Paddle program';

interface ProgramState {
  path: string;
  traits: Record<string, unknown>;
  feeds: { name: string; shape: number[]; dtype: string }[];
  fetches: string[];
  params: {
    name: string; shape: number[]; dtype: string; min?: number; max?: number;
    nonfinite?: number; note?: string;
  }[];
  params_file: string | null;
  params_note: string;
  ops: number;
  blocks: number;
}

function el(tag: string, cls: string, text = ''): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  e.textContent = text;
  return e;
}

const shape = (s: number[]) => `[${s.map(d => (d < 0 ? '?' : d)).join(', ')}]`;

/** What the parameters table says of a tensor's values: its range, what is not finite. */
function range(p: ProgramState['params'][number]): string {
  const parts = [];
  if (p.min !== undefined) {
    parts.push(`${p.min.toPrecision(4)} .. ${p.max!.toPrecision(4)}`);
  }
  if (p.nonfinite) {
    parts.push(`${p.nonfinite} NaN/Inf`);
  }
  return parts.join(', ') || p.note || '';
}

/**
 * The tab's content: a facts bar, the parameters (folded), the program view. The server
 * holds the program while a tab shows it: the tab names itself (`tab`, its own id: two
 * tabs on one file count apart) when it asks for the program, and says when it closes.
 */
export class ProgramPanel extends Widget {
  readonly tab = Date.now().toString(36) + Math.random().toString(36).slice(2, 10);

  constructor(readonly path: string) {
    super();
    this.addClass('pd-program-file');
    void this.load();
  }

  private query(): string {
    return `program?path=${encodeURIComponent(this.path)}&tab=${this.tab}`;
  }

  dispose(): void {
    if (!this.isDisposed) {
      // the server frees the program when no tab shows it (nothing to wait for here)
      requestAPI(this.query(), { method: 'DELETE' }).catch(() => undefined);
    }
    super.dispose();
  }

  private async load(): Promise<void> {
    this.node.replaceChildren(el('div', 'pd-program-file-note', `reading ${this.path} ...`));
    let state: ProgramState;
    try {
      await loadStyles();
      state = await requestAPI<ProgramState>(this.query());
    } catch (e) {
      this.node.replaceChildren(el('div', 'pd-program-file-error',
                                   `Cannot open ${this.path}: ${(e as Error).message}`));
      return;
    }
    const facts = el('div', 'pd-program-file-facts');
    facts.append(
      el('div', '', `${state.ops} ops in ${state.blocks} block${state.blocks === 1 ? '' : 's'}`),
      el('div', '', 'inputs: ' + (state.feeds.map(f => `${f.name} ${shape(f.shape)} ${f.dtype}`)
                                    .join(', ') || 'none declared')),
      el('div', '', 'outputs: ' + (state.fetches.join(', ') || 'none declared')),
      el('div', 'pd-program-file-params-note', state.params_note));
    const params = document.createElement('details');
    params.className = 'pd-program-file-params';
    params.append(el('summary', '', `parameters (${state.params.length})`));
    const table = document.createElement('table');
    for (const p of state.params) {
      const row = document.createElement('tr');
      for (const text of [p.name, shape(p.shape), p.dtype, range(p)]) {
        row.append(el('td', '', text));
      }
      table.append(row);
    }
    params.append(table);
    const host = el('div', 'pd-program-file-view');
    this.node.replaceChildren(facts, params, host);
    const model = new RemoteModel(state.traits, body =>
      requestAPI<ProgramState>('program', {
        method: 'POST', body: JSON.stringify({ path: this.path, tab: this.tab, ...body })
      }).then(s => s.traits));
    const view = await loadView('program_view.js');
    view.default.render({ model, el: host });
  }
}

export class ProgramFactory extends ABCWidgetFactory<DocumentWidget<ProgramPanel>> {
  constructor(options: DocumentRegistry.IWidgetFactoryOptions,
              private openPath: (path: string) => Promise<unknown>) {
    super(options);
  }

  protected createNewWidget(
    context: DocumentRegistry.Context
  ): DocumentWidget<ProgramPanel> {
    const content = new ProgramPanel(context.path);
    const widget = new DocumentWidget({ content, context });
    widget.addClass('pd-program-document');
    widget.toolbar.addItem('open-notebook', new ToolbarButton({
      label: 'Open in a notebook',
      tooltip: 'Write a notebook beside this file that loads the program and its ' +
               'parameters and opens the step debugger (an existing one is kept), and open it',
      className: 'pd-open-notebook',
      onClick: () => {
        requestAPI<{ path: string }>('notebook', {
          method: 'POST', body: JSON.stringify({ path: context.path })
        }).then(r => this.openPath(r.path))
          .catch(e => showErrorMessage('No notebook written', (e as Error).message));
      }
    }));
    return widget;
  }
}
