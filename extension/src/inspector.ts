/**
 * The Paddle inspector in the right sidebar: the current notebook's kernel's live program,
 * scopes and step debugger, whichever cell made them.
 *
 * The panel draws a widget the kernel makes (paddle_nb/notebook/inspector.py) with the
 * notebook's own widget manager (through the notebook's rendermime, as an output would).
 * While the panel is open it asks for that widget with a silent request that evaluates
 * `paddle_nb.notebook.inspector.sidebar_model_id()`, only in a kernel that has imported
 * paddle_nb (the panel never imports anything into a kernel), when it opens and after each
 * executed cell until the kernel answers; from then the widget refreshes itself from the
 * kernel. A closed panel asks nothing, so a notebook nobody inspects pays nothing.
 */
import { MimeModel } from '@jupyterlab/rendermime';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
const ASK =
  "__import__('paddle_nb.notebook.inspector', fromlist=['inspector']).sidebar_model_id() " +
  "if 'paddle_nb' in __import__('sys').modules else ''";

export class InspectorPanel extends Panel {
  private notebook: NotebookPanel | null = null;
  private shown: Widget | null = null;
  private asking = false;
  private note = new Widget();

  constructor(private tracker: INotebookTracker) {
    super();
    this.id = 'paddle-nb-inspector';
    this.addClass('pd-inspector-panel');
    this.title.label = 'Paddle';
    this.title.caption = 'Paddle inspector';
    this.note.addClass('pd-inspector-note');
    this.addWidget(this.note);
    tracker.currentChanged.connect((_, panel) => this.follow(panel));
    NotebookActions.executed.connect((_, { notebook }) => {
      if (this.notebook && notebook === this.notebook.content && !this.shown) {
        void this.ask();
      }
    });
    this.follow(tracker.currentWidget);
  }

  /** Opened: ask the kernel now (nothing is asked, or made in the kernel, while the
   * panel is closed). */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (!this.shown) {
      void this.ask();
    }
  }

  private say(text: string): void {
    this.note.node.textContent = text;
    this.note.setHidden(false);
  }

  private clear(): void {
    if (this.shown) {
      this.shown.dispose();
      this.shown = null;
    }
  }

  /** Show the inspector of another notebook's kernel (or say there is none). */
  private follow(panel: NotebookPanel | null): void {
    if (panel === this.notebook) {
      return;
    }
    this.clear();
    this.notebook = panel;
    if (!panel) {
      this.say('Open a notebook: the inspector shows its kernel\'s paddle_nb program.');
      return;
    }
    panel.sessionContext.statusChanged.connect((_, status) => {
      if (panel === this.notebook && (status === 'restarting' || status === 'dead')) {
        this.clear();
        this.say('The kernel restarted: run a cell that uses paddle_nb.');
      }
    });
    panel.disposed.connect(() => {
      if (panel === this.notebook) {
        this.follow(this.tracker.currentWidget === panel ? null : this.tracker.currentWidget);
      }
    });
    void panel.sessionContext.ready.then(() => this.ask());
  }

  private async ask(): Promise<void> {
    const panel = this.notebook;
    const kernel = panel?.sessionContext.session?.kernel;
    if (!this.isVisible || !panel || !kernel || this.asking) {
      if (panel && !kernel) {
        this.say('This notebook has no kernel.');
      }
      return;
    }
    this.asking = true;
    try {
      const future = kernel.requestExecute({
        code: '', silent: true, store_history: false, user_expressions: { pnb: ASK }
      });
      const reply: any = await future.done;
      const answer = reply.content.user_expressions?.pnb;
      if (panel !== this.notebook) {
        return;
      }
      if (!answer || answer.status !== 'ok') {
        this.say(`The kernel could not make the inspector: ${answer?.evalue ?? 'no answer'}`);
        return;
      }
      const modelId = String(answer.data['text/plain'] ?? '').replace(/^'|'$/g, '');
      if (!modelId) {
        this.say('This notebook\'s kernel has not imported paddle_nb yet: run a cell that ' +
                 'does (import paddle_nb as pd, or %load_ext paddle_nb).');
        return;
      }
      await this.mount(panel, modelId);
    } finally {
      this.asking = false;
    }
  }

  private async mount(panel: NotebookPanel, modelId: string): Promise<void> {
    const rendermime = panel.content.rendermime;
    if (!rendermime.mimeTypes.includes(WIDGET_MIME)) {
      this.say('Jupyter widgets are not installed in this JupyterLab (pip install ipywidgets).');
      return;
    }
    const renderer = rendermime.createRenderer(WIDGET_MIME);
    renderer.addClass('pd-inspector-widget');
    await renderer.renderModel(new MimeModel({
      data: { [WIDGET_MIME]: { model_id: modelId, version_major: 2, version_minor: 1 } }
    }));
    if (panel !== this.notebook) {
      renderer.dispose();
      return;
    }
    this.clear();
    this.note.setHidden(true);
    this.shown = renderer;
    this.addWidget(renderer);
  }
}
