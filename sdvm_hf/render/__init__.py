"""The renderers of a summary and its report: text lines, JSON and the HTML page, together.

:mod:`.text` gives a summary's text lines (below the summary, which calls it); :mod:`.model`
is the :class:`~sdvm_hf.render.model.Report` they render (a summary and the samples behind
it); :mod:`.json` and :mod:`.html` encode it. The numbers themselves are :mod:`sdvm_hf.summary`'s;
reading a file into a report is :mod:`sdvm_hf.report`'s.

The package's own namespace stays empty: :meth:`Summary.lines() <sdvm_hf.summary.Summary.lines>`
imports :mod:`.text`, which should not bring the HTML page with it.
"""

__all__: list[str] = []
