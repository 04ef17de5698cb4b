"""The publish side's steps (:func:`versapub.api.publish` runs them in order): the
request's keyword groups (``request``), treating the input first (``treating``), choosing
the plug-ins, checking rules, columns and feasibility, decomposing, screening, meeting the
floor on published cells by recoding or local suppression of the key variables
(``recoding``, ``keys``), publishing every sub-table, the household figures and assembling
the release; a differentially private release takes its own path (``dp_release``)."""
