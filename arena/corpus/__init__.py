"""The corpus: dialogues in the CRSArena-Dial/DialogueKit and IARD layouts, read from files, exported
with pseudonymous user ids (one file, or the Download tab's bundle) and imported into the store."""
