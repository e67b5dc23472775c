"""What the window does, apart from its layout: plain QObjects with signals, one job each."""
