/**
 * Paddle 3's programs (PIR) are JSON: `X.json` saved with its parameters `X.pdiparams`
 * beside it. Which viewer a double-click opens is the document registry's choice, and it
 * chooses by file type, which it matches on the file's name alone
 * (DocumentRegistry.preferredWidgetFactories): no file type can say "a .json with a
 * .pdiparams beside it". So this module keeps the set of such paths, from what the file
 * browsers list (and, for Notebook 7's page of one document, from that document's folder),
 * and puts the Paddle program factory first among the preferred factories of those paths
 * only. A double-click on `X.json` opens the program tab; every other .json keeps the
 * viewer it had; *Open With > Paddle program* works on any .json (program_tab.ts's factory
 * is registered for the 'json' file type).
 */
import { PageConfig, PathExt, URLExt } from '@jupyterlab/coreutils';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { FileBrowser } from '@jupyterlab/filebrowser';
import { Contents } from '@jupyterlab/services';

export const PIR_SUFFIX = '.json';
const PARAMS_SUFFIX = '.pdiparams';

interface IListed {
  name: string;
  path: string;
}

/** The paths of the `X.json` in one folder's listing that have `X.pdiparams` beside them. */
export function pirPrograms(items: Iterable<IListed>): string[] {
  const listed = [...items];
  const names = new Set(listed.map(i => i.name));
  return listed
    .filter(i => i.name.endsWith(PIR_SUFFIX) &&
                 names.has(i.name.slice(0, -PIR_SUFFIX.length) + PARAMS_SUFFIX))
    .map(i => i.path);
}

/** The PIR programs of the folders seen so far, by path as the file browser names them. */
export class PirPaths {
  private known = new Set<string>();
  private watched = new WeakSet<FileBrowser>();

  constructor(private contents: Contents.IManager) {}

  /** Whether `path` is a PIR program (the routes may give it URL-encoded). */
  has(path: string): boolean {
    const plain = PathExt.removeSlash(path);
    if (this.known.has(plain)) {
      return true;
    }
    try {
      return this.known.has(decodeURIComponent(plain));
    } catch {
      return false;                 // not URL-encoded after all (a lone '%')
    }
  }

  /** A folder's listing: its PIR programs replace what was known of that folder. */
  note(folder: string, items: Iterable<IListed>): void {
    const here = PathExt.removeSlash(folder);
    for (const path of [...this.known]) {
      if (PathExt.dirname(path) === here) {
        this.known.delete(path);
      }
    }
    for (const path of pirPrograms(items)) {
      this.known.add(PathExt.removeSlash(path));
    }
  }

  /** List `folder` through the contents API and note it (nothing if it cannot be read). */
  async check(folder: string): Promise<void> {
    try {
      const listing = await this.contents.get(folder, { content: true });
      if (listing.type === 'directory' && Array.isArray(listing.content)) {
        this.note(folder, listing.content as Contents.IModel[]);
      }
    } catch {
      // an unreadable folder: its files open as their file types say
    }
  }

  /** Follow a file browser: each time it lists its folder (a cd, a refresh, a poll). */
  watch(browser: FileBrowser): void {
    if (this.watched.has(browser)) {
      return;
    }
    this.watched.add(browser);
    const model = browser.model;
    const update = () => this.note(model.path, model.items());
    model.refreshed.connect(update);
    update();
  }
}

/**
 * Make `factory` the first preferred (so the default) widget factory of the paths in
 * `paths`. The registry has no per-path default; every choice of a default (the document
 * manager's open, *Open With*, Notebook 7's routes) asks preferredWidgetFactories, so the
 * registry's own method is wrapped, and answers as before for every other path.
 */
export function preferForPirPrograms(registry: DocumentRegistry, factory: string,
                                     paths: PirPaths): void {
  const preferred = registry.preferredWidgetFactories.bind(registry);
  registry.preferredWidgetFactories = (path: string) => {
    const factories = preferred(path);
    if (!paths.has(path)) {
      return factories;
    }
    const ours = factories.find(f => f.name === factory);
    return ours ? [ours, ...factories.filter(f => f !== ours)] : factories;
  };
}

/**
 * The document a Notebook 7 `/edit/<path>` page shows: that page has no file browser, and
 * it asks for the default factory as soon as the app has started, so the folder of a
 * `.json` it shows is listed before (null on any other page).
 */
export function editedPath(): string | null {
  // the base URL may be absolute or a path: made absolute against the page's address
  const prefix = new URL(URLExt.join(PageConfig.getBaseUrl(), 'edit') + '/',
                         window.location.href).href;
  const here = window.location.href.split(/[?#]/)[0];
  if (PageConfig.getOption('notebookPage') !== 'edit' || !here.startsWith(prefix)) {
    return null;
  }
  const path = decodeURIComponent(here.slice(prefix.length));
  return path.endsWith(PIR_SUFFIX) ? path : null;
}
