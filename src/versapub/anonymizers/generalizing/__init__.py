"""The generalizing family: values replaced by ranges or hierarchy nodes so that records
share them (Mondrian, Incognito, 1-D l-diversity, Sequential Sweep) and what they share."""
