/**
 * paddle_nb's JupyterLab extension (also Notebook 7): the Paddle inspector in the right
 * sidebar (inspector.ts) and PaddlePaddle program files opened as a Paddle program tab
 * (program_tab.ts): .pdmodel, __model__, and Paddle 3's PIR X.json beside X.pdiparams
 * (pir_files.ts). Built into paddle_nb/labextension/ by `npm run build` (README).
 */
import {
  ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PathExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser, IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { INotebookTracker } from '@jupyterlab/notebook';

import { InspectorPanel } from './inspector';
import { PirPaths, editedPath, preferForPirPrograms } from './pir_files';
import { FACTORY, FILE_TYPE, ProgramFactory } from './program_tab';

const OPEN_INSPECTOR = 'paddle-nb:open-inspector';
// How long Notebook 7's page of one .json waits for its folder's listing before it opens
// the file as its file type says (a server that slow shows the JSON viewer instead).
const EDIT_PAGE_WAIT_MS = 5000;

const inspector: JupyterFrontEndPlugin<void> = {
  id: 'paddle-nb-inspector:inspector',
  description: 'The Paddle inspector: the kernel\'s live paddle_nb program, scopes and debugger',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILabShell],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const panel = new InspectorPanel(tracker);
    app.shell.add(panel, 'right', { rank: 900 });
    app.commands.addCommand(OPEN_INSPECTOR, {
      label: 'Show the Paddle inspector',
      execute: () => app.shell.activateById(panel.id)
    });
  }
};

const programFiles: JupyterFrontEndPlugin<void> = {
  id: 'paddle-nb-inspector:program-files',
  description: 'Open PaddlePaddle program files (.pdmodel, __model__, a PIR .json beside ' +
               'its .pdiparams) as a program view',
  autoStart: true,
  optional: [IFileBrowserFactory, IDefaultFileBrowser],
  activate: async (app: JupyterFrontEnd, browsers: IFileBrowserFactory | null,
                   defaultBrowser: IDefaultFileBrowser | null) => {
    app.docRegistry.addFileType({
      name: FILE_TYPE,
      displayName: 'Paddle program',
      extensions: ['.pdmodel'],
      pattern: '^__model__$',
      mimeTypes: ['application/octet-stream'],
      fileFormat: 'base64',
      contentType: 'file'
    });
    const factory = new ProgramFactory({
      name: FACTORY,
      label: 'Paddle program',
      // any .json may be opened with it (Open With); the default only for PIR programs
      fileTypes: [FILE_TYPE, 'json'],
      defaultFor: [FILE_TYPE],
      modelName: 'base64',
      readOnly: true
    }, path => app.commands.execute('docmanager:open', { path }));
    app.docRegistry.addWidgetFactory(factory);

    const pir = new PirPaths(app.serviceManager.contents);
    preferForPirPrograms(app.docRegistry, FACTORY, pir);
    if (defaultBrowser) {
      pir.watch(defaultBrowser);
    }
    if (browsers) {
      browsers.tracker.forEach(browser => pir.watch(browser));
      browsers.tracker.widgetAdded.connect((_, browser) => pir.watch(browser));
    }
    const edited = editedPath();
    if (edited !== null) {       // awaited (boundedly): the page opens it once started
      const waited = new Promise(resolve => setTimeout(resolve, EDIT_PAGE_WAIT_MS));
      await Promise.race([pir.check(PathExt.dirname(edited)), waited]);
    }
  }
};

export default [inspector, programFiles];
