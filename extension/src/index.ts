/**
 * paddle_nb's JupyterLab extension (also Notebook 7): the Paddle inspector in the right
 * sidebar (inspector.ts) and PaddlePaddle program files opened as a Paddle program tab
 * (program_tab.ts). Built into paddle_nb/labextension/ by `npm run build` (README).
 */
import {
  ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { InspectorPanel } from './inspector';
import { FACTORY, FILE_TYPE, ProgramFactory } from './program_tab';

const OPEN_INSPECTOR = 'paddle-nb:open-inspector';

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
  description: 'Open PaddlePaddle program files (.pdmodel, __model__) as a program view',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
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
      fileTypes: [FILE_TYPE],
      defaultFor: [FILE_TYPE],
      modelName: 'base64',
      readOnly: true
    }, path => app.commands.execute('docmanager:open', { path }));
    app.docRegistry.addWidgetFactory(factory);
  }
};

export default [inspector, programFiles];
