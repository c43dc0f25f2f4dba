this is [[ not a finished template
