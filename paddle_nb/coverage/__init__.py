"""How much of PaddlePaddle 2.6.2's public API runs here: ``python -m paddle_nb coverage``.

The list of APIs is Paddle's (the ``__all__`` of paddle.nn, paddle.nn.functional,
paddle.metric, paddle.static.nn and the public functions of the paddle.tensor submodules).
Each was called once in a small static program with real Paddle 2.6.2
(tools/coverage/make_paddle_api_table.py): the program's bytes, its feeds, its
startup-initialised parameters and what Paddle computed are in ``paddle_2_6_2_apis.npz``,
indexed by ``paddle_2_6_2_apis.json``. An API is *covered* when its saved program loads,
runs on our executor and matches Paddle's outputs and gradients (rtol and atol 1e-5), not
merely when its op types are registered.

``table.py`` reads the data, ``run.py`` runs one API and says what happened, ``report.py``
sums the outcomes up and prints them."""
from .report import summarize, format_report
from .run import Outcome, run_api, run_all
from .table import ApiTable, load_table

__all__ = ["ApiTable", "Outcome", "format_report", "load_table", "run_all", "run_api",
           "summarize"]
