"""The microphone as one of the box's sources: its name in the screen's notices
(inbox.SourceStatus) and how often one lost or missing is looked for again.

Without numpy, unlike the rest of this package: the daemon looks for a microphone plugged in
late (daemon/listening.py) before any capture has loaded it.
"""

MICROPHONE = "microphone"
# A lost microphone is opened again this long after it was lost, twice as long after each
# try that fails, up to RETRY_MAX_S (a USB microphone plugged back in is heard within it);
# so is one looked for that was not there at the start.
RETRY_S = 0.5
RETRY_MAX_S = 8.0
