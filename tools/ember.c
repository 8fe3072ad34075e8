#include <stdio.h>
#include "ember.h"
int main(void) { printf("ember %s\n", ember_version()); return 0; }
