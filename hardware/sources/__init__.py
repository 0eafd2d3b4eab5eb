"""The implementations behind `hardware.open_source`; each module is imported only when used."""
