"""Browser side of the notebook widgets: plain ES modules and CSS, loaded by anywidget.

Installed as ``paddle_nb.extension`` (next to the Python side in ``paddle_nb/notebook``);
nothing here is fetched from the network.
"""
