// Runs in onFlowComplete, whatever happened before.
output.cleanedUp = true;
console.log('cleaned up after ' + output.typed);
