"""The publish side's steps (:func:`versapub.api.publish` runs them in order): choosing
the plug-ins, checking rules, columns and feasibility, decomposing, screening, publishing
every sub-table and assembling the release."""
