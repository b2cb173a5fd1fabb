/**
 * Hosting one of paddle_nb's widget views (the ES modules in paddle_nb/notebook/views/, which a
 * notebook loads through anywidget) outside a notebook: in the *Paddle program* tab.
 *
 * A view only ever talks to its `model`: get/set/save_changes/on/off/send. Here that model
 * is a plain object whose state lives in the Jupyter server (paddle_nb/lab/handlers.py):
 * `save_changes` posts the changed traits, `send` posts a message, and the server answers
 * with the view's new state, from which the changed traits fire their `change:` events.
 */
import { ServerConnection } from '@jupyterlab/services';
import { URLExt } from '@jupyterlab/coreutils';

type Listener = () => void;
type State = Record<string, unknown>;

/** GET or POST one of paddle_nb's server routes; an error's message is the server's. */
export async function requestAPI<T>(route: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'paddle-nb', route);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  let data: any = text;
  try {
    data = JSON.parse(text);
  } catch {
    // an asset: text, not JSON
  }
  if (!response.ok) {
    const why = data && data.error ? data.error : `${response.status} ${response.statusText}`;
    throw new Error(why);
  }
  return data as T;
}

/** The model a view sees; `post` sends {changes} or {message} and returns the new traits. */
export class RemoteModel {
  private traits: State;
  private dirty: State = {};
  private listeners = new Map<string, Set<Listener>>();

  constructor(traits: State, private post: (body: State) => Promise<State>) {
    this.traits = { ...traits };
  }

  get(name: string): any {
    return this.traits[name];
  }

  set(name: string, value: unknown): void {
    this.traits[name] = value;
    this.dirty[name] = value;
    this.fire(name);
  }

  save_changes(): void {
    const changes = this.dirty;
    this.dirty = {};
    if (Object.keys(changes).length) {
      this.post({ changes }).then(t => this.update(t), e => this.failed(e));
    }
  }

  send(message: State): void {
    this.post({ message }).then(t => this.update(t), e => this.failed(e));
  }

  /** A refused request: said in the browser's console (the view keeps its last state). */
  private failed(e: unknown): void {
    console.warn(`paddle_nb: the server refused a change: ${(e as Error).message}`);
  }

  on(events: string, fn: Listener): void {
    for (const ev of events.split(' ')) {
      if (!this.listeners.has(ev)) {
        this.listeners.set(ev, new Set());
      }
      this.listeners.get(ev)!.add(fn);
    }
  }

  off(events: string, fn: Listener): void {
    for (const ev of events.split(' ')) {
      this.listeners.get(ev)?.delete(fn);
    }
  }

  /** New traits from the server: each one that differs fires its change event once. */
  update(traits: State): void {
    const fired = new Set<Listener>();
    for (const [name, value] of Object.entries(traits)) {
      if (JSON.stringify(this.traits[name]) === JSON.stringify(value)) {
        continue;
      }
      this.traits[name] = value;
      for (const fn of this.listeners.get(`change:${name}`) ?? []) {
        if (!fired.has(fn)) {
          fired.add(fn);
          fn();
        }
      }
    }
  }

  private fire(name: string): void {
    for (const fn of this.listeners.get(`change:${name}`) ?? []) {
      fn();
    }
  }
}

const modules = new Map<string, Promise<any>>();

/** A view's ES module, as the server serves it (the same text a notebook widget loads). */
export function loadView(name: string): Promise<any> {
  if (!modules.has(name)) {
    modules.set(name, requestAPI<string>(`asset/${name}`).then(text => {
      const url = URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
      return import(/* webpackIgnore: true */ url);
    }));
  }
  return modules.get(name)!;
}

let styled = false;

/** The views' stylesheet, added to the page once. */
export async function loadStyles(): Promise<void> {
  if (styled) {
    return;
  }
  styled = true;
  const style = document.createElement('style');
  style.textContent = await requestAPI<string>('asset/widgets.css');
  style.dataset.paddleNb = 'widgets';
  document.head.appendChild(style);
}
